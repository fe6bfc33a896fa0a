tests/data/onnx/bad/no_graph_field.onnx
