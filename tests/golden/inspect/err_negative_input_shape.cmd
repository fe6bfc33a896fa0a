tests/data/onnx/tiny_mlp.onnx --input-shape x=-1x64
