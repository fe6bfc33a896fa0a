tests/data/onnx/tiny_mlp.onnx --dim batch=0
