tests/data/measurements/synthetic-h200like.measurements.json -o /dev/null
