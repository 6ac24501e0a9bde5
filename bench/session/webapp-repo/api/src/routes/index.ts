import type { FastifyInstance } from "fastify";
import { authRoutes } from "./auth";
import { meRoutes } from "./me";
import { projectRoutes } from "./projects";
import { taskRoutes } from "./tasks";
import { searchRoutes } from "./search";
import { uploadRoutes } from "./uploads";
import { webhookRoutes } from "./webhooks";

export async function registerRoutes(app: FastifyInstance) {
  await app.register(authRoutes);
  await app.register(meRoutes);
  await app.register(projectRoutes);
  await app.register(taskRoutes);
  await app.register(searchRoutes);
  await app.register(uploadRoutes);
  await app.register(webhookRoutes);
}
