tests/data/onnx/resnet50.onnx --input-shape input=1x3x224x224 --by-op
