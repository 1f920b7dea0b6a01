"""Interactive explorers (ipywidgets 8). Import explicitly: ``from posenc_helpers import widgets``.

Each explorer is an object that displays as its widget; ``explorer.set(...)``
changes controls from code and ``explorer.refresh()`` redraws. Because a
static web page cannot run Python, every notebook pairs its explorer with a
static companion figure that shows the same thing.
"""

from ._explorer import FigureExplorer
from .order import WordOrderExplorer
from .naive import NaivePositionsExplorer
from .sine_only import SineCollisionExplorer
from .sinusoidal import SinusoidalExplorer
from .rotation import UnitCircleExplorer
from .rope import RopeDecayExplorer
from .alibi import AlibiExplorer
from .learned import T5BucketExplorer
from .long_context import RopeScalingExplorer
from .comparison import OffsetHeadExplorer

from .lab import LengthExplorer
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
