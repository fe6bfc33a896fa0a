tests/data/onnx/bad/dangling.onnx
