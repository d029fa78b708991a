print("ObservingBench: not yet")
