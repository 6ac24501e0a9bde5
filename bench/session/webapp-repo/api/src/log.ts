import pino from "pino";
import { config } from "./config";

export const log = pino({
  level: config.LOG_LEVEL,
  redact: {
    paths: [
      "password",
      "passwordHash",
      "token",
      "*.token",
      "req.headers.cookie",
      "req.headers.authorization",
      'req.headers["x-csrf-token"]',
      "stripeEvent",
      "email.html",
      "email.text",
    ],
    censor: "[redacted]",
  },
  transport: config.NODE_ENV === "development" ? { target: "pino-pretty" } : undefined,
});
