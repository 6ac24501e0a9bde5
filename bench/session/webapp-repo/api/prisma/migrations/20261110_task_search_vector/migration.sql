-- Full-text search over task titles (weight A) and descriptions (weight B).
-- `simple` config so German and French titles are not stemmed as English.
ALTER TABLE "tasks"
  ADD COLUMN "searchVector" tsvector
  GENERATED ALWAYS AS (
    setweight(to_tsvector('simple', coalesce("title", '')), 'A') ||
    setweight(to_tsvector('simple', coalesce(jsonb_path_query_array("description", 'strict $.**.text')::text, '')), 'B')
  ) STORED;

-- CreateIndex
CREATE INDEX "tasks_searchVector_idx" ON "tasks" USING GIN ("searchVector");
