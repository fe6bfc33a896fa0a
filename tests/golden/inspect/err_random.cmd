tests/data/onnx/bad/random.onnx
