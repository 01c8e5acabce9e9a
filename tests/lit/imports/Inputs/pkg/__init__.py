# A package: its modules import each other relatively.
