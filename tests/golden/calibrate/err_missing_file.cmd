tests/data/measurements/absent.measurements.json -o /dev/null
