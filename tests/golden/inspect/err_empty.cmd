tests/data/onnx/bad/empty.onnx
