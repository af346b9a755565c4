import string

from server.common.tokens import hash_secret, new_id, new_secret


def test_secrets_are_letters_and_digits_so_they_paste_after_a_flag() -> None:
    secrets = {new_secret() for _ in range(2000)}
    assert len(secrets) == 2000
    allowed = set(string.ascii_letters + string.digits)
    for secret in secrets:
        assert len(secret) == 43
        assert set(secret) <= allowed


def test_ids_are_hex_and_hashes_are_stable() -> None:
    identifier = new_id()
    assert len(identifier) == 32
    assert set(identifier) <= set(string.hexdigits.lower())
    assert hash_secret("abc") == hash_secret("abc") != hash_secret("abd")
