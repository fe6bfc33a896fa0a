tests/data/onnx/bert_base.onnx --input-shape 1x128
