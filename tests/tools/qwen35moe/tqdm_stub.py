# tqdm stub (not installed): a progress bar that does nothing.
class tqdm:
    def __init__(self, *a, **k): pass
    def update(self, *a, **k): pass
    def close(self): pass
    def set_description(self, *a, **k): pass
    def __enter__(self): return self
    def __exit__(self, *a): pass
    @staticmethod
    def write(*a, **k): pass
