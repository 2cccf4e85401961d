"""Looking at an environment from outside, as JE's utilities do: :mod:`.inspect` shows what is in the
cache and the trees (for notebooks and tests), :mod:`.verify` checks a log against the trees it
holds (JE's ``DbVerify``). Neither is a part of the environment: both take one that is open."""
