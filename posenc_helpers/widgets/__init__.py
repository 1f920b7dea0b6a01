"""Interactive explorers (ipywidgets 8). Import explicitly: ``from posenc_helpers import widgets``.

Each explorer is an object that displays as its widget; ``explorer.set(...)``
changes controls from code and ``explorer.refresh()`` redraws. A static web
page cannot run Python: the website plays frames that each explorer drew at
build time for a grid of settings (``tools/site/explorers.py``), and every
notebook pairs its explorer with a static companion figure that shows the same
thing without scripts.
"""

from ._explorer import FigureExplorer
from .ch01_why_order_matters import WordOrderExplorer
from .ch02_naive_positions import NaivePositionsExplorer
from .ch03_sine_only import SineCollisionExplorer
from .ch04_sine_cosine_pairs import SinusoidalExplorer
from .ch05_rotation_proof import UnitCircleExplorer
from .ch06_learned_and_relative import T5BucketExplorer
from .ch07_rope import RopeDecayExplorer
from .ch08_alibi import AlibiExplorer
from .ch09_long_context import RopeScalingExplorer
from .ch10_comparison import OffsetHeadExplorer
from .ch11_train_short_test_long import LengthExplorer
from .ch12_positions_in_todays_models import RopeBaseExplorer
from .ch13_positions_in_2026 import RotaryFractionExplorer
from .ch14_positional_bugs_museum import BugSymptomExplorer

__all__ = [
    "FigureExplorer",
    "WordOrderExplorer",
    "NaivePositionsExplorer",
    "SineCollisionExplorer",
    "SinusoidalExplorer",
    "UnitCircleExplorer",
    "RopeDecayExplorer",
    "AlibiExplorer",
    "T5BucketExplorer",
    "RopeScalingExplorer",
    "OffsetHeadExplorer",
    "LengthExplorer",
    "RopeBaseExplorer",
    "RotaryFractionExplorer",
    "BugSymptomExplorer",
]
