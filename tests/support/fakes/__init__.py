"""Local fakes of what the tests cannot reach: real servers speaking real wire formats."""
