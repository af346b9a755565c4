"""The secret box: AES-256-GCM under a key ring kept in the data folder.

``box`` seals and opens one secret bound to its row; ``ring`` keeps the keys
(a 0600 file, or one wrapped by a passphrase); ``columns`` describes where
ciphertexts live, so a start-up check and key rotation can find every one.
"""
