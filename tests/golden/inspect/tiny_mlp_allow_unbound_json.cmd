tests/data/onnx/tiny_mlp.onnx --allow-unbound --format json
