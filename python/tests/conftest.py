"""pytest setup: the helpers next to the tests (bounds.py, ddp_worker.py) are importable."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
