tests/data/onnx/resnet18.onnx --dim batch=1 --format json
