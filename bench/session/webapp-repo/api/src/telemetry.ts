import * as Sentry from "@sentry/node";
import { trace, SpanStatusCode, type Span } from "@opentelemetry/api";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { getNodeAutoInstrumentations } from "@opentelemetry/auto-instrumentations-node";
import { PrismaInstrumentation } from "@prisma/instrumentation";
import { config } from "./config";

const tracer = trace.getTracer("tandem-api");

export function startTelemetry(service: "api" | "worker"): void {
  if (config.SENTRY_DSN) {
    Sentry.init({ dsn: config.SENTRY_DSN, environment: config.NODE_ENV, tracesSampleRate: 0 });
  }
  if (config.OTEL_EXPORTER_OTLP_ENDPOINT) {
    new NodeSDK({
      serviceName: `tandem-${service}`,
      instrumentations: [getNodeAutoInstrumentations(), new PrismaInstrumentation()],
    }).start();
  }
}

/** Runs fn inside a span named like "billing.sync"; records and rethrows errors. */
export async function withSpan<T>(name: string, fn: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}

export function captureJobFailure(err: unknown, context: { job: string; jobId?: string }): void {
  Sentry.captureException(err, { tags: { job: context.job }, extra: { jobId: context.jobId } });
}

export function captureRequestError(err: unknown, requestId: string): void {
  Sentry.captureException(err, { tags: { requestId } });
}
