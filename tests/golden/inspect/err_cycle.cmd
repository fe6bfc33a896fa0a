tests/data/onnx/bad/cycle.onnx
