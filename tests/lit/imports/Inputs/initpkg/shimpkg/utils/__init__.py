# Re-exports what its modules define, as FlagGems' flag_gems/utils/__init__.py does.
from shimpkg.utils.helper import tl_extra_shim
from .consts import BLOCK_DEFAULT
