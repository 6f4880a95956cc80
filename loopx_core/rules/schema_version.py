"""The board schema this LoopX reads and writes. The migrations bring a board up
to it (``store/migrations.STEPS`` ends at it); the plain readers on the cold
path (``store/plainread``, ``adapters/fastcheck``) answer only a board at it
and leave any other to the kernel. One constant, standard library only, so
neither reader pays for importing the migrations."""

SCHEMA_VERSION = 8
