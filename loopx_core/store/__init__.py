"""The store: the models and their ORM, the hot SQL, frozen migrations, the
SQLite and PostgreSQL backends, rows turned into values, and the event log."""
