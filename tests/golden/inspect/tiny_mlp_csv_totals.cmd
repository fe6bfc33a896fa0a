tests/data/onnx/tiny_mlp.onnx --dim batch=4 --format csv
