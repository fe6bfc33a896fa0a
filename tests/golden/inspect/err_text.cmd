tests/data/onnx/bad/text.onnx
