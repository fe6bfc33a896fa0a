tests/data/onnx/tiny_cnn.onnx --input-shape 2x3x32x32 --by-op
