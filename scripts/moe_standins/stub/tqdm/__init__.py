# a silent tqdm
class tqdm:
    def __init__(self, *a, **k): pass
    def update(self, n=1): pass
    def close(self): pass
    def __enter__(self): return self
    def __exit__(self, *a): pass
