# ftax_embed_text(OUT_VAR INPUT SYMBOL): a generated C++ source that defines
# `extern const char ftax::SYMBOL[]` holding INPUT's text, for a library that must not open
# files at run time (src/predictor/lowering_table.json). Sets OUT_VAR to the source's path.
#
# The text is read at configure time and written as one raw string literal; INPUT is a
# configure dependency, so editing it re-runs CMake at the next build, which rewrites the
# source (configure_file writes only when the text changed) and recompiles it.
set(FTAX_EMBED_TEMPLATE ${CMAKE_CURRENT_LIST_DIR}/embed_text.cc.in)

function(ftax_embed_text out_var input symbol)
  get_filename_component(FTAX_EMBED_INPUT ${input} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  file(RELATIVE_PATH FTAX_EMBED_SOURCE ${PROJECT_SOURCE_DIR} ${FTAX_EMBED_INPUT})
  string(MAKE_C_IDENTIFIER ${FTAX_EMBED_SOURCE} id)
  set(output ${CMAKE_CURRENT_BINARY_DIR}/generated/${id}.cc)
  file(READ ${FTAX_EMBED_INPUT} FTAX_EMBED_TEXT)
  # The literal ends at the first `)ftax_embed"`; a text that holds one cannot be embedded.
  string(FIND "${FTAX_EMBED_TEXT}" ")ftax_embed\"" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${FTAX_EMBED_SOURCE} contains `)ftax_embed\"`, which ends the raw string "
                        "that embeds it (cmake/FtaxEmbedText.cmake)")
  endif()
  set(FTAX_EMBED_SYMBOL ${symbol})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${FTAX_EMBED_INPUT})
  configure_file(${FTAX_EMBED_TEMPLATE} ${output} @ONLY)
  set(${out_var} ${output} PARENT_SCOPE)
endfunction()
