tests/data/onnx/tiny_control_flow.onnx --format json --by-node
