"""The one exception type users see.

Anything a user can cause (a bad params value, a missing file, unreadable input) raises
`SumpipeError` with a one-line message; the CLI prints it and exits non-zero without a traceback.
"""


class SumpipeError(Exception):
    """A user-facing error whose message is a single line that says what to fix."""


class ConfigError(SumpipeError):
    """A params.yaml value is missing, unknown or of the wrong type; the message names the key."""
