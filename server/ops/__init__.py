"""Operations on a whole data folder: backups, restores and health checks."""
