-- candor's PostgreSQL history, schema 2: the CI build a run came from, beside its provider
-- and job (issue #17): the repository as the service names it, the service's id of the
-- build (workflow run, pipeline) and the attempt (1, then 2 for a re-run). NULL when the
-- service does not say and for runs stored before this migration. Adding nullable
-- columns without a default rewrites nothing.
ALTER TABLE runs ADD COLUMN ci_repository bytea;
ALTER TABLE runs ADD COLUMN ci_run_id bytea;
ALTER TABLE runs ADD COLUMN ci_attempt bigint;
