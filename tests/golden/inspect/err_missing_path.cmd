tests/data/onnx/bad/no_such_model.onnx
