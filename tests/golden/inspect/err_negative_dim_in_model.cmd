tests/data/onnx/bad/negative_dim.onnx
