# The service's image: the admin API (default command) or the pipeline workers
# (`node dist/pipeline/main.js`), on the current Node.js LTS. Built in one stage, run as the
# unprivileged `node` user in another.
FROM node:26-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY api ./api
COPY pipeline ./pipeline
COPY schemas ./schemas
COPY sql ./sql
# The web console and the record conversions it bundles, built by this script.
COPY records ./records
COPY console ./console
COPY scripts/build-console.ts ./scripts/
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:26-slim
ENV NODE_ENV=production PORT=3000 API_OPERATOR_PORT=3001 PIPELINE_HTTP_PORT=3100
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
# The data folder (DATA_DIR, relative to /app) must be the node user's: the processes write there.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 3000 3001 3100
# The operator paths are on their own port: the API's or the worker's, whichever this process is.
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "const alive=(p)=>fetch('http://127.0.0.1:'+p+'/healthz').then(r=>r.ok,()=>false);Promise.all([alive(process.env.API_OPERATOR_PORT),alive(process.env.PIPELINE_HTTP_PORT)]).then(a=>process.exit(a.includes(true)?0:1))"
CMD ["node", "--enable-source-maps", "dist/api/main.js"]
