"""Interactive explorers (ipywidgets 8). Import explicitly: ``from posenc_helpers import widgets``.

Each explorer is an object that displays as its widget; ``explorer.set(...)``
changes controls from code and ``explorer.refresh()`` redraws. Because a
static web page cannot run Python, every notebook pairs its explorer with a
static companion figure that shows the same thing.
"""

from ._explorer import FigureExplorer
from .alibi import AlibiExplorer
from .comparison import OffsetHeadExplorer
from .lab import LengthExplorer
from .learned import T5BucketExplorer
from .long_context import RopeScalingExplorer
from .naive import NaivePositionsExplorer
from .order import WordOrderExplorer
from .rope import RopeDecayExplorer
from .rotation import UnitCircleExplorer
from .sine_only import SineCollisionExplorer
from .sinusoidal import SinusoidalExplorer

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
]
