print("tidings: not yet")
