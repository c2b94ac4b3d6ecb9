// Public interface of G-code analysis: the worker-thread queue the file service calls after each upload, and the result types.
export { AnalysisQueue, AnalysisCancelledError, type AnalysisQueueOptions } from './queue.ts';
export { analyseBuffer, analyseFile, GcodeAnalyser } from './analyse-file.ts';
export { parseSlicerComments } from './slicer-meta.ts';
export { ANALYSER_VERSION } from './types.ts';
export type {
  AnalysisOptions, AnalysisProgress, Area, Dimensions, GantryAnalysisExtras, GcodeAnalysis, MachineLimits, SlicedFor, SlicerReport,
} from './types.ts';
