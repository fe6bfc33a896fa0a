arch:bert:layers=12 arch:bert:layers=6 arch:bert:layers=24 --dim seq=128 --profile h100 --framework cuda-graph --precision fp16 --batch 1,16
