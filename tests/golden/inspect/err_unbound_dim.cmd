tests/data/onnx/bert_base.onnx
