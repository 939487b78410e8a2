"""PostgreSQL edge: the pool, migrations, and every SQL statement the project runs."""
