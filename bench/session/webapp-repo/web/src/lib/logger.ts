import * as Sentry from "@sentry/react";

// The web app's only logger: warnings and errors also go to Sentry.
export const logger = {
  debug(message: string, extra?: Record<string, unknown>) {
    if (import.meta.env.DEV) console.debug(message, extra);
  },
  warn(message: string, extra?: Record<string, unknown>) {
    if (import.meta.env.DEV) console.warn(message, extra);
    Sentry.addBreadcrumb({ level: "warning", message, data: extra });
  },
  error(error: unknown, extra?: Record<string, unknown>) {
    if (import.meta.env.DEV) console.error(error, extra);
    Sentry.captureException(error, { extra });
  },
};
