tests/data/onnx/tiny_mlp.onnx --dim batch=1 --format yaml
