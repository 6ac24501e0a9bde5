import { z } from "zod";

// The only place that reads process.env. The process refuses to start when a
// variable is missing or malformed, so a bad deploy fails in the release step.
const schema = z.object({
  NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
  PORT: z.coerce.number().int().default(3000),
  APP_URL: z.string().url(),
  DATABASE_URL: z.string().url(),
  REDIS_URL: z.string().url(),
  SESSION_SECRET: z.string().min(32),
  POSTMARK_SERVER_TOKEN: z.string().default(""),
  EMAIL_FROM: z.string().min(3),
  S3_BUCKET: z.string(),
  S3_ENDPOINT: z.string().url().optional(),
  GROWTHBOOK_CLIENT_KEY: z.string().default(""),
  SENTRY_DSN: z.string().default(""),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().default(""),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
});

const parsed = schema.safeParse(process.env);
if (!parsed.success) {
  const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  throw new Error(`Invalid environment:\n  ${problems.join("\n  ")}`);
}

export const config = parsed.data;
export const isProduction = config.NODE_ENV === "production";
