arch:bert --dim seq=128 --profile h100
