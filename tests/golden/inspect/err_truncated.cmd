tests/data/onnx/bad/truncated.onnx
