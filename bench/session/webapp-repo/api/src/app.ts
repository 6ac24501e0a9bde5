import Fastify from "fastify";
import cookie from "@fastify/cookie";
import rateLimit from "@fastify/rate-limit";
import { Redis } from "ioredis";
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import { config } from "./config";
import { log } from "./log";
import { errorHandler } from "./errors";
import { registerRoutes } from "./routes";
import { registerRealtime } from "./realtime";

export async function buildApp() {
  const app = Fastify({ loggerInstance: log, trustProxy: true }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(errorHandler);

  await app.register(cookie, { secret: config.SESSION_SECRET });
  await app.register(rateLimit, {
    max: 300,
    timeWindow: "1 minute",
    redis: new Redis(config.REDIS_URL),
    keyGenerator: (request) => request.user?.id ?? request.ip,
  });

  app.get("/healthz", async () => ({ ok: true }));
  await registerRealtime(app);
  await app.register(registerRoutes);
  return app;
}

export type App = Awaited<ReturnType<typeof buildApp>>;
