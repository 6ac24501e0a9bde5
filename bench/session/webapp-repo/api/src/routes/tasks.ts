import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import {
  createTaskBody,
  listQuery,
  page,
  taskDetail,
  taskId,
  taskSummary,
  updateTaskBody,
} from "@tandem/shared/schemas/task";
import { requireUser } from "../auth/requireUser";
import * as tasks from "../services/tasks";

const projectParams = z.object({ projectId: z.string().cuid() });
const taskParams = z.object({ taskId });

export const taskRoutes: FastifyPluginAsyncZod = async (app) => {
  app.addHook("preHandler", requireUser);

  app.get(
    "/projects/:projectId/tasks",
    { schema: { params: projectParams, querystring: listQuery, response: { 200: page(taskSummary) } } },
    async (request) => tasks.listTasks(request.user, request.params.projectId, request.query),
  );

  app.post(
    "/projects/:projectId/tasks",
    { schema: { params: projectParams, body: createTaskBody, response: { 201: taskDetail } } },
    async (request, reply) => {
      const task = await tasks.createTask(request.user, request.params.projectId, request.body);
      return reply.status(201).send(task);
    },
  );

  app.get(
    "/tasks/:taskId",
    { schema: { params: taskParams, response: { 200: taskDetail } } },
    async (request) => tasks.getTask(request.user, request.params.taskId),
  );

  app.patch(
    "/tasks/:taskId",
    { schema: { params: taskParams, body: updateTaskBody, response: { 200: taskDetail } } },
    async (request) => tasks.updateTask(request.user, request.params.taskId, request.body),
  );

  app.delete(
    "/tasks/:taskId",
    { schema: { params: taskParams, response: { 204: z.null() } } },
    async (request, reply) => {
      await tasks.deleteTask(request.user, request.params.taskId);
      return reply.status(204).send(null);
    },
  );
};
