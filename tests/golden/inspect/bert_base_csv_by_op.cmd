tests/data/onnx/bert_base.onnx --dim batch=1 --dim seq=128 --format csv --by-op
